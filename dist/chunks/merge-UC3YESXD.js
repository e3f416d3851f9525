import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{mergeReports}from"./chunk-MSWC6NOG.js";import"./chunk-IEZQ5W6D.js";import"./chunk-TGEQ2A5A.js";import"./chunk-IEF6XIED.js";export{mergeReports};
