import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{MAX_REPORT_BYTES,MAX_REPORT_FILES,readReportFiles}from"./chunk-JLMVNPG5.js";import"./chunk-MVQN2BWW.js";import"./chunk-IEF6XIED.js";export{MAX_REPORT_BYTES,MAX_REPORT_FILES,readReportFiles};
