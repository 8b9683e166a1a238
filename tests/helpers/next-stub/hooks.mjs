// Module hooks: `next`, imported by scripts/console-server.mjs, resolves to ./next.mjs.
export async function resolve(specifier, context, nextResolve) {
  if (specifier === "next" && context.parentURL?.endsWith("/scripts/console-server.mjs")) {
    return { url: new URL("./next.mjs", import.meta.url).href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
