import js from "@eslint/js";
import nextPlugin from "@next/eslint-plugin-next";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

/** The Next.js app's files: React hooks and Next's rules apply here. */
const APP = ["app/**/*.{ts,tsx}", "components/**/*.{ts,tsx}", "lib/**/*.tsx", "proxy.ts"];

/**
 * Console links keep the tab's team (`?team=<slug>`): next/link and next/navigation's useRouter only
 * through components/layout/team-link.tsx (TeamLink, useTeamRouter).
 */
const TEAM_LINKS = [
  { name: "next/link", message: "Use TeamLink (components/layout/team-link.tsx): console links keep ?team=." },
  {
    name: "next/navigation",
    importNames: ["useRouter"],
    message: "Use useTeamRouter (components/layout/team-link.tsx): navigations keep ?team=.",
  },
];

/**
 * The console's code uses bundler resolution: `./env`, not `./env.js` (Turbopack cannot map `.js`
 * to a `.ts` source). The engine (engine/, its own package) is NodeNext and keeps `.js`.
 */
const EXTENSIONLESS = {
  regex: "^\\.{1,2}/.*\\.js$",
  message: "The console imports its own TypeScript extensionless (bundler resolution): drop the .js.",
};

export default tseslint.config(
  {
    ignores: ["node_modules/", "data/", ".next/", "coverage/", "test-results/", "playwright-report/", "next-env.d.ts"],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        performance: "readonly",
        URL: "readonly",
        fetch: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" },
      ],
      "no-constant-condition": ["error", { checkLoops: false }],
    },
  },
  {
    files: ["**/*.{ts,tsx}"],
    ignores: ["engine/**"],
    rules: { "no-restricted-imports": ["error", { patterns: [EXTENSIONLESS], paths: TEAM_LINKS }] },
  },
  {
    // The engine imports these under NodeNext, the console under bundler resolution: with no
    // relative imports of their own they resolve the same in both (engine/tsconfig.json).
    files: [
      "lib/net/address.ts",
      "lib/host-policy.ts",
      "lib/orkestr/webhook-events.ts",
      "lib/orkestr/sandbox-statuses.ts",
    ],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ regex: "^\\.", message: "The engine imports this module: keep it free of relative imports." }] },
      ],
    },
  },
  { files: APP, ...reactHooks.configs.flat["recommended-latest"] },
  {
    files: APP,
    plugins: { "@next/next": nextPlugin },
    rules: { ...nextPlugin.configs.recommended.rules, ...nextPlugin.configs["core-web-vitals"].rules },
  },
  {
    // Convention 5: lib/server is server-only; components get data as props (DTOs).
    files: ["components/**/*.{ts,tsx}"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: TEAM_LINKS,
          patterns: [
            EXTENSIONLESS,
            {
              group: ["**/lib/server", "**/lib/server/**", "@/lib/server", "@/lib/server/**"],
              message: "lib/server is server-only: pass data in as props (DTOs) instead.",
            },
          ],
        },
      ],
    },
  },
);
