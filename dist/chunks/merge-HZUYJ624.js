import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{mergeReports}from"./chunk-R23ODIQ4.js";import"./chunk-RPSXOGVP.js";import"./chunk-IEF6XIED.js";export{mergeReports};
