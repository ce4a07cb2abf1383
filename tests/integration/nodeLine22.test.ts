import { describeNodeLine } from "../helpers/nodeLineSuite";

// The packed reqwatch on Node 22, as its users install and run it (tests/helpers/nodeLineSuite.ts).
describeNodeLine("22");
