import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// The daemon serves dist/ with a CSP that forbids inline scripts, so the
// build must emit none: no module preload polyfill (it is an inline script
// in some setups) and every asset as a file, never inlined as data.
export default defineConfig({
  plugins: [svelte()],
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: false, // keep dist/.gitkeep
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: false,
  },
  server: {
    // Settings reads the config keys' docs from the generated page (src/lib/util/configdoc.ts).
    fs: { allow: [fileURLToPath(new URL('.', import.meta.url)), fileURLToPath(new URL('../docs', import.meta.url))] },
    // `npm run dev` proxies the API to a running daemon (MEMTRAY_URL, default the usual address).
    proxy: {
      '/api': { target: process.env.MEMTRAY_URL ?? 'http://127.0.0.1:7432', changeOrigin: true },
      '/login': { target: process.env.MEMTRAY_URL ?? 'http://127.0.0.1:7432', changeOrigin: true },
    },
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.ts'],
    setupFiles: ['src/test/setup.ts'],
  },
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
});
