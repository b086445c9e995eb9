/** Pure time helper shared by the Node scheduler and the native worker's crons. */
/** The time in Europe/London as `HH:MM` (24-hour), whatever the season. */
export function londonTime(ms: number): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Europe/London',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(ms));
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '00';
  return `${part('hour')}:${part('minute')}`;
}
