import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { NamedError } from '../domain/errors.js';
import { EXPORT_ENCODINGS, type ExportDelimiter, type ExportEncoding, type ExportFormat } from './export-format.js';

/**
 * Export files as back offices produce them, read as rows of strings: CSV in the
 * encodings vendors actually serve (UTF-8 with or without a BOM, GBK/GB18030 from
 * legacy Chinese systems, UTF-16 from Excel's "Unicode text") and XLSX (the first
 * worksheet). Parsing is left to maintained libraries (csv-parse, exceljs); this
 * module only decides the encoding and turns cells into text.
 */

/** Why an export file could not be read: the message names the pack field that fixes it. */
export class ExportFormatError extends NamedError {
  override readonly name = 'ExportFormatError';
}

const BOMS: ReadonlyArray<{ bytes: readonly number[]; encoding: ExportEncoding }> = [
  { bytes: [0xef, 0xbb, 0xbf], encoding: 'utf-8' },
  { bytes: [0xff, 0xfe], encoding: 'utf-16le' },
  { bytes: [0xfe, 0xff], encoding: 'utf-16be' },
];

/** The encoding a byte-order mark at the start of the file names, if any. */
export function bomEncoding(body: Uint8Array): ExportEncoding | undefined {
  return BOMS.find(({ bytes }) => bytes.every((b, i) => body[i] === b))?.encoding;
}

/**
 * The file's text. A byte-order mark wins over the declared encoding: it is
 * unambiguous, and a vendor that switched its export to UTF-8 with a BOM should
 * not break a pack that still says gbk. Bytes that are invalid in the encoding
 * fail loudly instead of turning into U+FFFD, so a GBK file read as UTF-8 says
 * what to declare rather than showing "����" as column names.
 */
export function decodeExport(body: Uint8Array, declared?: ExportEncoding): string {
  const encoding = bomEncoding(body) ?? declared ?? 'utf-8';
  try {
    // TextDecoder drops the BOM of its own encoding (ignoreBOM: false).
    return new TextDecoder(encoding, { fatal: true }).decode(body);
  } catch (error) {
    const hint = declared
      ? `it is not valid ${declared}: check export.encoding`
      : `it is not valid UTF-8 and has no byte-order mark: declare export.encoding (one of ${EXPORT_ENCODINGS.join(', ')})`;
    throw new ExportFormatError(`the export file could not be decoded: ${hint}`, { cause: error });
  }
}

const isXlsx = (body: Uint8Array) => body.length > 4 && body[0] === 0x50 && body[1] === 0x4b && body[2] === 0x03 && body[3] === 0x04;

/** Rows of an export file, CSV or XLSX (told apart by content: an XLSX file is a zip archive). */
export async function parseExport(body: Uint8Array, format: ExportFormat = {}): Promise<string[][]> {
  if (isXlsx(body)) return parseXlsx(body);
  return parseCsv(decodeExport(body, format.encoding), format.delimiter);
}

/** RFC 4180 CSV (quoted fields may hold separators, quotes and line breaks); blank rows are dropped. */
export function parseCsv(text: string, delimiter: ExportDelimiter = ','): string[][] {
  const rows: string[][] = parse(text, { bom: true, delimiter, relax_column_count: true, skip_empty_lines: true });
  return rows.filter((r) => r.some((cell) => cell !== ''));
}

/** A cell as the vendor's spreadsheet shows its value: rich text joined, formulas by their result, dates as ISO. */
function cellText(value: ExcelJS.CellValue): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  if (typeof value !== 'object') return String(value);
  if ('richText' in value) return value.richText.map((run) => run.text).join('');
  if ('hyperlink' in value) return cellText(value.text);
  if ('formula' in value || 'sharedFormula' in value) return cellText(value.result);
  if ('error' in value) return value.error;
  return '';
}

/** The first worksheet of an XLSX workbook, one string a cell, empty cells as ''. */
export async function parseXlsx(body: Uint8Array): Promise<string[][]> {
  const workbook = new ExcelJS.Workbook();
  try {
    // A copy as a plain ArrayBuffer: exceljs reads it through JSZip, which takes one.
    await workbook.xlsx.load(body.slice().buffer);
  } catch (error) {
    throw new ExportFormatError(`the export file looks like XLSX (a zip archive) but is not a workbook: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const sheet = workbook.worksheets[0];
  if (!sheet) throw new ExportFormatError('the export file is a zip archive (so read as XLSX) with no worksheet in it');
  const rows: string[][] = [];
  sheet.eachRow({ includeEmpty: false }, (row) => {
    const cells: string[] = [];
    row.eachCell({ includeEmpty: true }, (cell, column) => {
      cells[column - 1] = cellText(cell.value);
    });
    rows.push(Array.from(cells, (cell) => cell ?? ''));
  });
  return rows.filter((r) => r.some((cell) => cell !== ''));
}
