import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{mergeReports}from"./chunk-TNI3T4F7.js";import"./chunk-IEZQ5W6D.js";import"./chunk-RVRNCKDX.js";import"./chunk-IEF6XIED.js";export{mergeReports};
