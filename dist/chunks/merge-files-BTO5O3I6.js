import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{readReportFiles}from"./chunk-YP637UHZ.js";import"./chunk-TIHBFXAN.js";import"./chunk-IEF6XIED.js";export{readReportFiles};
