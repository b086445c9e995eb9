import { loadConfig } from '../../config/index.js';
import { createLogger } from '../../logger.js';
import { configuredExecutors } from '../../validation/executors.js';
import { SandboxService } from './service.js';

/**
 * The validation sandbox of the native runtime (docs/native.md "Validation"): the service on `PORT`
 * (default 8080), its executors set up by the validation configuration of its environment
 * (`VERDICT_VALIDATION_INSTALL`, `VERDICT_VALIDATION_REGISTRY`, `VERDICT_VALIDATION_ALLOW_LOCAL`, ...).
 * SIGTERM closes it.
 */
const config = loadConfig({ ...process.env, VERDICT_DB_PATH: ':memory:' });
const log = createLogger(config.logLevel, undefined, config.logFormat).child({ name: 'sandbox' });
const service = new SandboxService({ executors: configuredExecutors(config.validation), log });
const port = await service.listen(Number.parseInt(process.env.PORT ?? '', 10) || 8080);
log.info({ event: 'sandbox-started', port }, `validation sandbox listening on ${port}`);
const stop = () => void service.stop().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
