import { describeKillsDuring } from "../helpers/actionKillsSuite";

// SIGKILL at random moments of a bulk cleanup, many times (tests/helpers/actionKillsSuite.ts).
describeKillsDuring("cleanup");
