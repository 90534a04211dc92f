/**
 * The embedded runtime as the product's CLI sees it (`demo`, `run`, the data folder): the one module of twin/runtime
 * that src/ may import (.dependency-cruiser.mjs, "product-reaches-scaffolding-through-entry-points").
 */
export { startEmbeddedPaperclip, type BatchProgress, type EmbeddedOptions, type EmbeddedPaperclip } from './embedded-paperclip.js';
