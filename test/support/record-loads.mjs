// Preloaded with `node --import` (after tsx): every module the process loads is appended, one URL a line,
// to the file named by PAPERCLIP_RECORD_LOADS. The hooks run in the loader's own thread (record-loads-hooks.mjs).
import { register } from 'node:module';

register('./record-loads-hooks.mjs', import.meta.url, { data: { file: process.env['PAPERCLIP_RECORD_LOADS'] } });
