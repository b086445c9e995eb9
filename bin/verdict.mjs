#!/usr/bin/env node
// The `verdict` operator CLI: runs the TypeScript sources through tsx (a runtime dependency).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
