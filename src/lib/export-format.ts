/**
 * The formats an export file may declare, as plain data: the site-pack schema validates
 * against these lists without loading the parsers (src/lib/export-file.ts) that read them.
 */

/** The encodings an export source may declare (`export.encoding`); without one, a byte-order mark decides, else UTF-8. */
export const EXPORT_ENCODINGS = ['utf-8', 'gbk', 'gb18030', 'utf-16le', 'utf-16be'] as const;
export type ExportEncoding = (typeof EXPORT_ENCODINGS)[number];

/** The field separators a CSV export may declare (`export.delimiter`). */
export const EXPORT_DELIMITERS = [',', ';', '\t'] as const;
export type ExportDelimiter = (typeof EXPORT_DELIMITERS)[number];

export interface ExportFormat {
  encoding?: ExportEncoding | undefined;
  delimiter?: ExportDelimiter | undefined;
}
