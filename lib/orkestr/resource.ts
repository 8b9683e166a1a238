import type { OrkestrCore } from "./core";

/** Base class of the resources (openai-node's APIResource): each method is one line over the core. */
export abstract class APIResource {
  constructor(protected readonly core: OrkestrCore) {}
}
