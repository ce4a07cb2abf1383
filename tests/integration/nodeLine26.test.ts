import { describeNodeLine } from "../helpers/nodeLineSuite";

// The packed reqwatch on Node 26, as its users install and run it (tests/helpers/nodeLineSuite.ts).
describeNodeLine("26");
