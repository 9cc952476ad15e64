/** A small line chart as SVG text (no dependency): one line per series over the same x values, log-scaled x. */
export interface Series {
  name: string;
  values: number[];
}

const COLORS = ['#4f46e5', '#dc2626', '#059669', '#d97706'];

export function lineChart(
  title: string,
  xs: number[],
  series: Series[],
  yLabel: string,
  x0 = 0,
  width = 420,
  height = 260,
): string {
  const pad = { l: 52, r: 12, t: 28, b: 40 };
  const w = width - pad.l - pad.r;
  const h = height - pad.t - pad.b;
  const lx = xs.map((x) => Math.log10(x));
  const [minX, maxX] = [Math.min(...lx), Math.max(...lx)];
  const maxY = Math.max(1e-9, ...series.flatMap((s) => s.values.filter(Number.isFinite))) * 1.1;
  const px = (x: number) => x0 + pad.l + ((Math.log10(x) - minX) / (maxX - minX || 1)) * w;
  const py = (y: number) => pad.t + h - (y / maxY) * h;
  const out: string[] = [
    `<text x="${x0 + pad.l}" y="16" font-size="13" font-weight="600">${title}</text>`,
    `<line x1="${x0 + pad.l}" y1="${pad.t + h}" x2="${x0 + pad.l + w}" y2="${pad.t + h}" stroke="#999"/>`,
    `<line x1="${x0 + pad.l}" y1="${pad.t}" x2="${x0 + pad.l}" y2="${pad.t + h}" stroke="#999"/>`,
    `<text x="${x0 + 4}" y="${pad.t + h / 2}" font-size="11" transform="rotate(-90 ${x0 + 12} ${pad.t + h / 2})">${yLabel}</text>`,
  ];
  for (const x of xs)
    out.push(
      `<text x="${px(x)}" y="${pad.t + h + 16}" font-size="11" text-anchor="middle">${x.toLocaleString('en')}</text>`,
    );
  for (const f of [0, 0.5, 1])
    out.push(
      `<text x="${x0 + pad.l - 6}" y="${py(maxY * f) + 4}" font-size="10" text-anchor="end">${(maxY * f).toFixed(maxY < 10 ? 1 : 0)}</text>`,
    );
  series.forEach((s, i) => {
    const pts = s.values.map((v, j) => `${px(xs[j])},${py(v)}`).join(' ');
    const c = COLORS[i % COLORS.length];
    out.push(`<polyline points="${pts}" fill="none" stroke="${c}" stroke-width="2"/>`);
    s.values.forEach((v, j) => out.push(`<circle cx="${px(xs[j])}" cy="${py(v)}" r="3" fill="${c}"/>`));
    out.push(
      `<text x="${x0 + pad.l + 8}" y="${pad.t + 12 + i * 14}" font-size="11" fill="${c}">${s.name}</text>`,
    );
  });
  out.push(
    `<text x="${x0 + pad.l + w / 2}" y="${height - 4}" font-size="11" text-anchor="middle">documents (log scale)</text>`,
  );
  return out.join('\n');
}

export function svg(width: number, height: number, parts: string[]): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" style="background:#fff">\n${parts.join('\n')}\n</svg>\n`;
}
