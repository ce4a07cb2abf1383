/**
 * The shared store as reqwatch's own programs (the CLI) use it, beside the published
 * `openSharedTracker`: the tracker's calls with a person's actions, and its address as shown.
 */
export { openSharedStore, type SharedOperator } from "./shared/sharedTracker";
export { retryShared, cancelShared } from "./shared/personActions";
export { shownUrl } from "./shared/pgDriver";
export { copyFolderToStore, copyStoreToFolder, type CopyReport } from "./shared/copyStore";
