// No dead references in the documentation a clone gets: every relative link of README.md, CHANGELOG.md, docs/*.md and
// verifier/README.md names a file or folder of the repository (and an #anchor into a Markdown file names one of its
// headings, by GitHub's slugs).
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PAGES = ['README.md', 'CHANGELOG.md', 'verifier/README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Markdown links and images outside code (fenced blocks and inline code spans removed first). */
function links(markdown: string): string[] {
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

/** GitHub's heading anchors of a Markdown file. */
function anchors(markdown: string): Set<string> {
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return new Set(
    [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      m[1]!
        .toLowerCase()
        .replace(/<[^>]*>/g, '')
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .trim()
        .replace(/\s/g, '-'),
    ),
  );
}

describe('documentation links', () => {
  it.each(PAGES)('every relative link of %s resolves to a file of the repository', (page) => {
    const markdown = readFileSync(join(ROOT, page), 'utf8');
    const dead: string[] = [];
    for (const link of links(markdown)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:
      const [path, anchor] = link.split('#') as [string, string | undefined];
      if (path.startsWith('/')) continue; // a page of the running service (`/docs`), not a file
      const target = path === '' ? join(ROOT, page) : join(dirname(join(ROOT, page)), decodeURIComponent(path));
      if (!target.startsWith(ROOT) || !existsSync(target)) {
        dead.push(`${link} (no file ${relative(ROOT, target)})`);
        continue;
      }
      if (anchor && target.endsWith('.md') && !anchors(readFileSync(target, 'utf8')).has(anchor)) dead.push(`${link} (no heading #${anchor} in ${relative(ROOT, target)})`);
    }
    expect(dead).toEqual([]);
  });

  it('names the verifier tarball the service serves: webhook-verifier-<the version of verifier/package.json>.tgz', () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'verifier/package.json'), 'utf8'));
    const named = PAGES.flatMap((page) => [...readFileSync(join(ROOT, page), 'utf8').matchAll(/webhook-verifier-(\d+\.\d+\.\d+)\.tgz/g)].map((m) => `${page}: ${m[1]}`));
    expect(named.length).toBeGreaterThan(2);
    expect(named.filter((n) => !n.endsWith(`: ${version}`))).toEqual([]);
  });
});
