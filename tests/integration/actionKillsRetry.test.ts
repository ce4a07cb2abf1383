import { describeKillsDuring } from "../helpers/actionKillsSuite";

// SIGKILL at random moments of a bulk retry, many times (tests/helpers/actionKillsSuite.ts).
describeKillsDuring("retry");
