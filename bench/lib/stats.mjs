// Medians and ratios: every figure the bench reports is a median over rounds,
// and every comparison a median of ratios taken within the same round.

export function median(values) {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const mid = finite.length >> 1;
  return finite.length % 2 ? finite[mid] : (finite[mid - 1] + finite[mid]) / 2;
}

export const min = (values) => Math.min(...values.filter((v) => Number.isFinite(v)));
export const max = (values) => Math.max(...values.filter((v) => Number.isFinite(v)));

export const fixed = (value, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
export const thousands = (value) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');
