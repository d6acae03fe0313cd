import yaml from '@rollup/plugin-yaml'
import vue from '@vitejs/plugin-vue'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

// The console page: built to ../dist, which the Cordis plugin serves at /dogu. Everything
// comes from node_modules, so the build needs no network.
export default defineConfig({
  root: fileURLToPath(new URL('client', import.meta.url)),
  base: '/dogu/',
  plugins: [vue(), yaml()],
  build: {
    outDir: fileURLToPath(new URL('dist', import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 2000,
    sourcemap: false,
  },
  logLevel: 'warn',
})
