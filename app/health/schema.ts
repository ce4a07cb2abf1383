import { z } from "zod";

/** The Health page's query: which page of the received names no mapping knows (`?unmapped=2`), the first when it is not a page number. */
export const healthQuery = z.object({
  unmapped: z.coerce.number().int().min(1).max(1_000_000).catch(1),
});
