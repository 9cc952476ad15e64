/**
 * Small line charts as SVG text (no dependency): one line per series over the same x values, log-scaled
 * x, linear or log-scaled y. A value that is not a finite number (a system that did not finish at that
 * size) leaves a gap in its line.
 */
export interface Series {
  name: string;
  values: number[];
}

export interface ChartOptions {
  title: string;
  xs: number[];
  series: Series[];
  yLabel: string;
  /** Top-left corner of the panel in the SVG. */
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  /** Log-scaled y (for values spanning several orders of magnitude); non-positive values are skipped. */
  logY?: boolean;
  /** Colours by series index. */
  colors?: string[];
}

export const COLORS = ['#4f46e5', '#dc2626', '#059669', '#d97706', '#7c3aed', '#0891b2'];

const fmt = (v: number) => (v >= 1 ? v.toFixed(0) : String(Number(v.toPrecision(1))));

export function lineChart(o: ChartOptions): string {
  const { title, xs, series, yLabel, x: x0 = 0, y: y0 = 0, width = 420, height = 260, logY = false } = o;
  const colors = o.colors ?? COLORS;
  const pad = { l: 52, r: 26, t: 28, b: 40 };
  const w = width - pad.l - pad.r;
  const h = height - pad.t - pad.b;
  const lx = xs.map((x) => Math.log10(x));
  const [minX, maxX] = [Math.min(...lx), Math.max(...lx)];
  const shown = (v: number) => Number.isFinite(v) && (!logY || v > 0);
  const all = series.flatMap((s) => s.values.filter(shown));
  // Log y: whole decades around the data; linear y: from 0 to 10% over the highest value.
  const lo = logY ? 10 ** Math.floor(Math.log10(Math.min(...all, 1))) : 0;
  const hi = logY ? 10 ** Math.ceil(Math.log10(Math.max(...all, lo * 10))) : Math.max(1e-9, ...all) * 1.1;
  const ty = (v: number) => (logY ? Math.log10(v) : v);
  const px = (x: number) => x0 + pad.l + ((Math.log10(x) - minX) / (maxX - minX || 1)) * w;
  const py = (v: number) => y0 + pad.t + h - ((ty(v) - ty(lo)) / (ty(hi) - ty(lo) || 1)) * h;
  const out: string[] = [
    `<text x="${x0 + pad.l}" y="${y0 + 16}" font-size="13" font-weight="600">${title}</text>`,
    `<line x1="${x0 + pad.l}" y1="${y0 + pad.t + h}" x2="${x0 + pad.l + w}" y2="${y0 + pad.t + h}" stroke="#999"/>`,
    `<line x1="${x0 + pad.l}" y1="${y0 + pad.t}" x2="${x0 + pad.l}" y2="${y0 + pad.t + h}" stroke="#999"/>`,
    `<text x="${x0 + 4}" y="${y0 + pad.t + h / 2}" font-size="11" transform="rotate(-90 ${x0 + 12} ${y0 + pad.t + h / 2})">${yLabel}</text>`,
  ];
  for (const x of xs)
    out.push(
      `<text x="${px(x)}" y="${y0 + pad.t + h + 16}" font-size="11" text-anchor="middle">${x.toLocaleString('en')}</text>`,
    );
  const ticks: number[] = [];
  if (logY) for (let v = lo; v <= hi * 1.0001; v *= 10) ticks.push(v);
  else ticks.push(0, hi / 2, hi);
  for (const v of ticks) {
    out.push(
      `<text x="${x0 + pad.l - 6}" y="${py(v) + 4}" font-size="10" text-anchor="end">${logY ? fmt(v) : v.toFixed(hi < 10 ? 1 : 0)}</text>`,
    );
    if (logY && v > lo && v < hi)
      out.push(`<line x1="${x0 + pad.l}" y1="${py(v)}" x2="${x0 + pad.l + w}" y2="${py(v)}" stroke="#eee"/>`);
  }
  series.forEach((s, i) => {
    const c = colors[i % colors.length];
    // One polyline per run of consecutive shown values.
    let run: string[] = [];
    const flush = () => {
      if (run.length > 1)
        out.push(`<polyline points="${run.join(' ')}" fill="none" stroke="${c}" stroke-width="2"/>`);
      run = [];
    };
    s.values.forEach((v, j) => {
      if (!shown(v)) return flush();
      run.push(`${px(xs[j])},${py(v)}`);
      out.push(`<circle cx="${px(xs[j])}" cy="${py(v)}" r="3" fill="${c}"/>`);
    });
    flush();
    out.push(
      `<text x="${x0 + pad.l + 8}" y="${y0 + pad.t + 12 + i * 14}" font-size="11" fill="${c}">${s.name}</text>`,
    );
  });
  out.push(
    `<text x="${x0 + pad.l + w / 2}" y="${y0 + height - 4}" font-size="11" text-anchor="middle">documents (log scale)</text>`,
  );
  return out.join('\n');
}

export function svg(width: number, height: number, parts: string[]): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" style="background:#fff">\n${parts.join('\n')}\n</svg>\n`;
}
