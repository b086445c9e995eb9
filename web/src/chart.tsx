import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';
import { useEffect, useRef } from 'preact/hooks';
import { TableHead } from './components';

Chart.register(
  BarController,
  BarElement,
  CategoryScale,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
);

/** Chart.js on a canvas, with the same numbers as a table for screen readers and keyboard users. */
export function ChartView({
  id,
  label,
  config,
  table,
}: {
  id: string;
  label: string;
  config: ChartConfiguration;
  table: { head: string[]; rows: (string | number)[][] };
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      ...config,
      options: { responsive: true, maintainAspectRatio: false, animation: false, ...config.options },
    });
    return () => chart.destroy();
  }, [JSON.stringify(config.data), JSON.stringify(config.options ?? {})]);
  return (
    <figure class="chart" data-chart={id}>
      <div class="chart-box">
        <canvas ref={canvas} role="img" aria-label={label} data-points={table.rows.length} />
      </div>
      <details>
        <summary>Show the numbers</summary>
        <div class="table-wrap">
          <table>
            <TableHead cols={table.head} />
            <tbody>
              {table.rows.map((r, i) => (
                <tr key={i}>
                  {r.map((c, j) => (
                    <td key={j}>{c}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

export const COLORS = {
  blue: '#2f6fdf',
  green: '#1f9d55',
  orange: '#d97706',
  red: '#d64545',
  purple: '#7c3aed',
  grey: '#8a94a6',
  teal: '#0f9ba8',
};
