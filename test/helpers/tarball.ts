import fs from 'node:fs';
import * as tar from 'tar';

/**
 * A repository archive shaped like GitHub's tarball of a commit: gzip'd tar with every entry under one
 * top folder named `<owner>-<repo>-<short sha>/`.
 */
export async function githubTarball(dir: string, topFolder: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const pack = tar.c({ gzip: true, cwd: dir, prefix: topFolder, portable: true }, fs.readdirSync(dir));
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
