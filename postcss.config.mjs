// Tailwind 4 runs as a PostCSS plugin; the design tokens live in tailwind.config.ts (loaded by @config).
export default {
  plugins: {
    "@tailwindcss/postcss": {},
  },
};
