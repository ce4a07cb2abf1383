import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { API_ROUTES, routePattern } from "../../lib/http/apiRoutes";
import { examplePath } from "../helpers/apiRoutes";

const APP_API = path.resolve(__dirname, "../../app/api");

/** Each route handler in app/api: its path as the table writes it (`[id]` is `:id`) and the methods it exports. */
function nextRouteHandlers(dir = APP_API): { path: string; methods: string[] }[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return nextRouteHandlers(full);
    if (!/^route\.(ts|tsx|js)$/.test(entry.name)) return [];
    const route = `/api/${path.relative(APP_API, dir).split(path.sep).join("/")}`.replace(/\/$/, "").replace(/\[(\w+)\]/g, ":$1");
    const methods = [...fs.readFileSync(full, "utf8").matchAll(/^export (?:async function|function|const) (GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)\b/gm)].map(
      (match) => match[1]!,
    );
    return [{ path: route, methods: methods.sort() }];
  });
}

describe("the route table", () => {
  it("names every route handler in app/api, with the methods it exports, and no route Next does not have", () => {
    const inTable = API_ROUTES.filter((route) => route.answeredBy === "next").map((route) => ({ path: route.path, methods: [...route.methods].sort() }));
    const byPath = (a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path);
    expect(nextRouteHandlers().sort(byPath)).toEqual(inTable.sort(byPath));
  });

  it("names each path once, and no read API path is also a Next route", () => {
    const shapes = API_ROUTES.map((route) => route.path.replace(/:\w+(\([^)]*\))?/g, ":"));
    expect(new Set(shapes).size).toBe(shapes.length);
  });

  it("turns a path into a pattern that takes one segment per parameter, and only the values a parameter lists", () => {
    expect(routePattern("/api/requests/:id").exec("/api/requests/a%2Fb")?.slice(1)).toEqual(["a%2Fb"]);
    expect(routePattern("/api/requests/:id").test("/api/requests/a/download/json")).toBe(false);
    expect(routePattern("/api/requests/:id").test("/api/requests/")).toBe(false);
    expect(routePattern("/api/values/:field(workspace|session)").exec("/api/values/session")?.slice(1)).toEqual(["session"]);
    expect(routePattern("/api/values/:field(workspace|session)").test("/api/values/model")).toBe(false);
    expect(routePattern("/api/sources/:name/requests/:id").exec("/api/sources/claude-mem/requests/7")?.slice(1)).toEqual(["claude-mem", "7"]);
  });

  it("gives every route a path a test can ask, which its own pattern matches", () => {
    for (const route of API_ROUTES) expect(routePattern(route.path).test(examplePath(route)), route.path).toBe(true);
  });
});
