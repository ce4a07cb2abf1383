import { describeKillsDuring } from "../helpers/actionKillsSuite";

// SIGKILL at random moments of a bulk retention, many times (tests/helpers/actionKillsSuite.ts).
describeKillsDuring("retention");
