/** Every static service token class set, for route × token tests (operator-api 5.1). */
export const TOKENS = {
  VERDICT_OPERATOR_ADMIN_TOKEN: 'admin-secret',
  VERDICT_OPERATOR_READ_TOKEN: 'read-secret',
  VERDICT_OPERATOR_COMMAND_TOKEN: 'command-secret',
  VERDICT_OPERATOR_BRIDGE_TOKEN: 'bridge-secret',
  VERDICT_QUEUE_ADMIN_TOKEN: 'qadmin-secret',
  VERDICT_QUEUE_ENQUEUE_TOKEN: 'qenqueue-secret',
  VERDICT_QUEUE_WORKER_TOKEN: 'qworker-secret',
};
