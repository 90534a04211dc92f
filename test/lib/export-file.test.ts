import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import ExcelJS from 'exceljs';
import { bomEncoding, decodeExport, ExportFormatError, parseCsv, parseExport, parseXlsx } from '../../src/lib/export-file.js';
import { writeZip } from '../../src/lib/zip.js';

/**
 * Export files in the encodings and formats vendors serve. The GBK and GB18030 bytes are written out
 * by hand (not produced by an encoder under test), so a decoder that guesses wrong cannot agree with itself.
 */

/** 单号,状态\r\nB-1,待处理\r\nB-2,已处理\r\n in GBK (two bytes per Chinese character, ASCII as itself). */
const GBK_CSV = Buffer.from(
  [
    'b5a5bac5 2c d7b4ccac 0d0a', // 单号,状态
    '422d31 2c b4fdb4a6c0ed 0d0a', // B-1,待处理
    '422d32 2c d2d1b4a6c0ed 0d0a', // B-2,已处理
  ]
    .join('')
    .replace(/\s/g, ''),
  'hex',
);
const EXPECTED = [
  ['单号', '状态'],
  ['B-1', '待处理'],
  ['B-2', '已处理'],
];
const TEXT = '单号,状态\r\nB-1,待处理\r\nB-2,已处理\r\n';

function utf16be(text: string): Buffer {
  const le = Buffer.from(text, 'utf16le');
  for (let i = 0; i < le.length; i += 2) [le[i], le[i + 1]] = [le[i + 1]!, le[i]!];
  return le;
}

describe('CSV encodings', () => {
  test('UTF-8 without a BOM, and with one (the BOM is not part of the first column name)', async () => {
    assert.deepEqual(await parseExport(Buffer.from(TEXT, 'utf8')), EXPECTED);
    assert.deepEqual(await parseExport(Buffer.from(`\uFEFF${TEXT}`, 'utf8')), EXPECTED);
    assert.equal(bomEncoding(Buffer.from(`\uFEFF${TEXT}`, 'utf8')), 'utf-8');
  });

  test('GBK, declared: the known bytes read as the Chinese column names and values', async () => {
    assert.deepEqual(await parseExport(GBK_CSV, { encoding: 'gbk' }), EXPECTED);
    assert.deepEqual(await parseExport(GBK_CSV, { encoding: 'gb18030' }), EXPECTED, 'GB18030 is a superset of GBK');
  });

  test('GB18030: a four-byte character outside GBK (U+20000) reads only as gb18030', async () => {
    const body = Buffer.concat([Buffer.from('name\r\n', 'ascii'), Buffer.from('95328236', 'hex'), Buffer.from('\r\n', 'ascii')]);
    assert.deepEqual(await parseExport(body, { encoding: 'gb18030' }), [['name'], ['\u{20000}']]);
    await assert.rejects(parseExport(body, { encoding: 'gbk' }), /not valid gbk: check export\.encoding/);
  });

  test('GBK, undeclared: fails naming export.encoding and its values, never "����" column names', async () => {
    await assert.rejects(parseExport(GBK_CSV), (error: Error) => {
      assert.ok(error instanceof ExportFormatError);
      assert.match(
        error.message,
        /not valid UTF-8 and has no byte-order mark: declare export\.encoding \(one of utf-8, gbk, gb18030, utf-16le, utf-16be\)/,
      );
      return true;
    });
  });

  test('UTF-16 LE and BE with a BOM are detected without a declaration', async () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(TEXT, 'utf16le')]);
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be(TEXT)]);
    assert.equal(bomEncoding(le), 'utf-16le');
    assert.equal(bomEncoding(be), 'utf-16be');
    assert.deepEqual(await parseExport(le), EXPECTED);
    assert.deepEqual(await parseExport(be), EXPECTED);
  });

  test('a BOM wins over the declared encoding (a vendor that moved to UTF-8 does not break a gbk pack)', () => {
    assert.equal(decodeExport(Buffer.from(`\uFEFF${TEXT}`, 'utf8'), 'gbk'), TEXT);
  });

  test('quoted fields hold separators, quotes and line breaks; blank lines are dropped; rows may differ in length', () => {
    const text = 'a,b,c\r\n"x, y","say ""hi""","two\nlines"\r\n\r\nshort\r\n';
    assert.deepEqual(parseCsv(text), [['a', 'b', 'c'], ['x, y', 'say "hi"', 'two\nlines'], ['short']]);
  });

  test("a declared ';' separator, as exports with a decimal comma use", async () => {
    const body = Buffer.from('Nr;Betrag;Status\n1;1.234,50;offen\n', 'utf8');
    assert.deepEqual(await parseExport(body, { delimiter: ';' }), [
      ['Nr', 'Betrag', 'Status'],
      ['1', '1.234,50', 'offen'],
    ]);
  });
});

describe('XLSX', () => {
  async function workbook(fill: (sheet: ExcelJS.Worksheet, book: ExcelJS.Workbook) => void): Promise<Buffer> {
    const book = new ExcelJS.Workbook();
    fill(book.addWorksheet('导出'), book);
    return Buffer.from(await book.xlsx.writeBuffer());
  }

  test('the first worksheet: strings, numbers, rich text, formulas by result, hyperlinks, dates, gaps as empty cells', async () => {
    const body = await workbook((sheet, book) => {
      sheet.addRow(['编号', '状态', '金额', '备注', '链接', '日期']);
      sheet.addRow([
        'B-1',
        { richText: [{ text: '待' }, { text: '处理', font: { bold: true } }] },
        1234.5,
        { formula: '"a"&"b"', result: 'ab' },
        { text: '打开', hyperlink: 'https://vendor.example/B-1' },
        new Date(Date.UTC(2026, 10, 3, 6, 22, 10)),
      ]);
      sheet.getCell('A4').value = 'B-3';
      sheet.getCell('C4').value = 7;
      book.addWorksheet('second').addRow(['not read']);
    });
    assert.deepEqual(await parseExport(body), [
      ['编号', '状态', '金额', '备注', '链接', '日期'],
      ['B-1', '待处理', '1234.5', 'ab', '打开', '2026-11-03T06:22:10.000Z'],
      ['B-3', '', '7'],
    ]);
  });

  test('a zip that is not a workbook says so', async () => {
    const zip = writeZip(new Map([['hello.txt', Buffer.from('hi')]]));
    await assert.rejects(
      parseXlsx(zip),
      (error: Error) => error instanceof ExportFormatError && /zip archive \(so read as XLSX\) with no worksheet/.test(error.message),
    );
  });
});
