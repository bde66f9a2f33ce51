// Markdown helpers for bench/results.md.
import { fixed } from './stats.mjs';

export function table(header, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * A target check: `higher` means the measured value must be >= target,
 * otherwise <= target. Returns the verdict cell text.
 */
export function verdict(measured, target, higher = true) {
  if (!Number.isFinite(measured)) return 'not measured';
  const met = higher ? measured >= target : measured <= target;
  if (met) return 'met';
  const gap = higher ? (target - measured) / target : (measured - target) / target;
  return `**missed by ${fixed(gap * 100, 0)} %**`;
}

export const isMet = (measured, target, higher = true) =>
  Number.isFinite(measured) && (higher ? measured >= target : measured <= target);
