export * from './types.js';
export * from './plan.js';
export * from './bubblewrap.js';
export * from './install.js';
export * from './local.js';
export * from './shadow.js';
export * from './executors.js';
export * from './e2b.js';
export { TailBuffer } from './tail-buffer.js';
