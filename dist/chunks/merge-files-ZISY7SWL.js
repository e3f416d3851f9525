import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{MAX_REPORT_BYTES,MAX_REPORT_FILES,readReportFiles}from"./chunk-SAEAQUE7.js";import"./chunk-ZBRQFQVS.js";import"./chunk-IEF6XIED.js";export{MAX_REPORT_BYTES,MAX_REPORT_FILES,readReportFiles};
