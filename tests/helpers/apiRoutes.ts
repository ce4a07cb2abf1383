import { API_ROUTES, type ApiRoute } from "../../lib/http/apiRoutes";

/** What each route parameter is filled with when a test tries every route: a request, session and workspace the tests make. */
const EXAMPLES: Readonly<Record<string, string>> = { id: "victim", part: "json", workspace: "gateway", name: "claude-mem" };

/** A path the route answers: each parameter filled from EXAMPLES, or with the first value it takes. */
export function examplePath(route: ApiRoute): string {
  return route.path.replace(/:(\w+)(?:\(([\w|-]+)\))?/g, (_, name: string, values: string | undefined) => {
    const value = values?.split("|")[0] ?? EXAMPLES[name];
    if (value === undefined) throw new Error(`tests/helpers/apiRoutes.ts has no example for :${name} (${route.path})`);
    return value;
  });
}

/** Every route with every method it answers, as a path to ask: the hostile-request tests try each. */
export function everyRoute(): { method: ApiRoute["methods"][number]; path: string; route: ApiRoute }[] {
  return API_ROUTES.flatMap((route) => route.methods.map((method) => ({ method, path: examplePath(route), route })));
}
