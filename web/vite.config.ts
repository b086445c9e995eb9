import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The operator dashboard (issue 25): a Preact single-page app served by Verdict under `/operator/`
 * (`web/dist/index.html` for the view paths, `web/dist/assets/*` at `/operator/assets/*`). Everything it
 * needs is bundled: no font, script or style is fetched from another host.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/operator/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  resolve: {
    alias: { react: 'preact/compat', 'react-dom': 'preact/compat' },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 400,
  },
});
