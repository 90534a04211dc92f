/**
 * The simulator as `paperclip demo` starts it: the one module of the back offices that src/ may import
 * (.dependency-cruiser.mjs, "product-reaches-scaffolding-through-entry-points").
 */
export { startSimulator, type RunningSimulator } from './server.js';
