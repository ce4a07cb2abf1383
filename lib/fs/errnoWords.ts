/** A file system error about `file` in plain words. */
export function errnoWords(error: NodeJS.ErrnoException, file: string): string {
  switch (error.code) {
    case "ENOENT":
      return `${file} does not exist`;
    case "EISDIR":
      return `${file} is a folder, not a file`;
    case "EACCES":
    case "EPERM":
      return `no permission to reach ${file}`;
    case "ENOTDIR":
      return `a part of ${file} is a file, not a folder`;
    case "EROFS":
      return `${file} is on a read-only file system`;
    case "ENOSPC":
      return `the disk holding ${file} is full`;
    case "ENAMETOOLONG":
      return `the path ${file} is too long`;
    case "ELOOP":
      return `${file} is a loop of symbolic links`;
    default:
      return `${file}: ${error.message}`;
  }
}
