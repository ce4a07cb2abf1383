"use strict";
// The Node.js reqwatch runs on, checked before anything else loads (the CLI's shim and the library's
// entry, dist/index.cjs): on an older Node, better-sqlite3 crashes the process (a segmentation fault
// on Node 20), so it gets one line that names both versions instead. Plain old JavaScript on purpose:
// it must parse on any Node. The minimum is package.json's engines, its one source.
var minimum = require("../package.json").engines.node.replace(/^>=\s*/, "");

function isAtLeast(version, wanted) {
  var have = version.split(".").map(Number);
  var need = wanted.split(".").map(Number);
  for (var i = 0; i < need.length; i++) {
    if ((have[i] || 0) !== need[i]) return (have[i] || 0) > need[i];
  }
  return true;
}

/** What to stop with when this Node is too old ("needs Node.js 22.14.0 or newer; this is ..."), else undefined. */
function unsupportedNode() {
  if (isAtLeast(process.versions.node, minimum)) return undefined;
  return "needs Node.js " + minimum + " or newer; this is Node.js " + process.versions.node + " (" + process.execPath + ").";
}

/**
 * What the library's entry throws on an older Node: catchable (an app may go on without tracking),
 * and, uncaught, its line and the one frame that threw it (reqwatch's entry), not ten loader frames.
 */
function unsupportedNodeError(text) {
  var limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 1;
  var error = new Error("reqwatch " + text);
  Error.captureStackTrace(error, unsupportedNodeError);
  Error.stackTraceLimit = limit;
  // Not enumerable, so an uncaught one prints no `{ code: ... }` after its line.
  Object.defineProperty(error, "code", { value: "ERR_REQWATCH_UNSUPPORTED_NODE" });
  return error;
}

module.exports = { unsupportedNode: unsupportedNode, unsupportedNodeError: unsupportedNodeError, minimumNode: minimum };
