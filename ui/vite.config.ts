/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// `KIP_SERVE` points the dev server's /api proxy at a running `kip serve`
// (default http://127.0.0.1:4840, kip serve's default address), so `npm run dev` works against a real nexus.
const target = process.env.KIP_SERVE ?? 'http://127.0.0.1:4840';

export default defineConfig({
  plugins: [svelte()],
  // Relative asset paths: the same build is served by `kip serve` at `/`
  // and embedded by the desktop shell behind its custom protocol.
  base: './',
  clearScreen: false,
  server: {
    port: 5173,
    strictPort: true,
    proxy: { '/api': { target, changeOrigin: true } },
  },
  build: {
    target: ['es2022', 'safari16'],
    chunkSizeWarningLimit: 1500,
    sourcemap: false,
  },
  test: {
    include: ['tests/unit/**/*.test.ts'],
    environment: 'node',
  },
});
