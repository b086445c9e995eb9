#!/usr/bin/env node
// The `verdict` operator CLI: runs the TypeScript sources through tsx (a runtime dependency). The entry
// runs whatever path started this file (npx runs it through node_modules/.bin/verdict).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/entry.ts');
