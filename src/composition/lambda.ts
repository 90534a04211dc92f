import { provideServices } from '../app/services.js';
import { createServices } from './services.js';

/**
 * What every Lambda entry point (lambdas/) imports: the process-wide services are built from the function's
 * environment on first use, and a warm function reuses them. The embedded runtime builds its own and sets them
 * with useServices, which takes precedence.
 */
provideServices(() => createServices());
