import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{endGroup,error,getInput,guardOutput,info,setFailed,setOutput,setSecret,startGroup,summary,warning}from"./chunk-L7OGZRSX.js";import"./chunk-XPXWJQO6.js";import"./chunk-IEF6XIED.js";export{endGroup,error,getInput,guardOutput,info,setFailed,setOutput,setSecret,startGroup,summary,warning};
