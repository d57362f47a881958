import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { splitPorts } from '../scripts/split.js';
import { SUBGRAPH_NAMES } from '../subgraphs/index.js';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

/** `npm run split`'s ports come from variables; the README's table and the Procfile say what the code computes. */
describe('the split deployment ports', () => {
  const defaults = splitPorts({});

  it('default to PORT (4000, 4001) for the gateways and PORT+101 onwards for the subgraphs, in subgraphs/index.ts order', () => {
    expect(defaults.gatewayPorts).toEqual([4000, 4001]);
    expect(Object.keys(defaults.subgraphPorts)).toEqual([...SUBGRAPH_NAMES]);
    SUBGRAPH_NAMES.forEach((name, i) => expect(defaults.subgraphPorts[name]).toBe(4101 + i));
  });

  it('follow PORT and SPLIT_SUBGRAPH_BASE_PORT, and refuse a subgraph range over the gateways', () => {
    const moved = splitPorts({ PORT: '8000', SPLIT_SUBGRAPH_BASE_PORT: '9100' });
    expect(moved.gatewayPorts).toEqual([8000, 8001]);
    expect(Object.values(moved.subgraphPorts)).toEqual(SUBGRAPH_NAMES.map((_, i) => 9100 + i));
    expect(Object.values(splitPorts({ PORT: '5000' }).subgraphPorts)[0]).toBe(5101);
    expect(() => splitPorts({ PORT: '4000', SPLIT_SUBGRAPH_BASE_PORT: '3995' })).toThrow(/SPLIT_SUBGRAPH_BASE_PORT/);
    expect(() => splitPorts({ SPLIT_SUBGRAPH_BASE_PORT: 'abc' })).toThrow(/SPLIT_SUBGRAPH_BASE_PORT/);
  });

  it('the Procfile runs each gateway and subgraph on the ports the code computes', () => {
    const lines = new Map(
      read('Procfile')
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1)]),
    );
    const urls = SUBGRAPH_NAMES.map((n) => `${n}=http://127.0.0.1:${defaults.subgraphPorts[n]}/graphql`).join(',');
    defaults.gatewayPorts.forEach((port: number, i: number) => {
      const line = lines.get(`gateway${i + 1}`)!;
      expect(line).toContain(`PORT=${port} `);
      expect(line).toContain(`SUBGRAPH_URLS=${urls} `);
    });
    for (const name of SUBGRAPH_NAMES) {
      expect(lines.get(name)).toBe(` PORT=${defaults.subgraphPorts[name]} HOST=127.0.0.1 NODE_ENV=production node dist/server/subgraph.js ${name}`);
    }
    const last = defaults.subgraphPorts[SUBGRAPH_NAMES[SUBGRAPH_NAMES.length - 1]];
    expect(read('Procfile')).toContain(`subgraphs ${defaults.subgraphPorts[SUBGRAPH_NAMES[0]]}-${last}`);
  });

  it("the README's split table gives the same ports and names the variables", () => {
    const readme = read('README.md');
    const section = readme.slice(readme.indexOf('### Split deployment'), readme.indexOf('## Configuration'));
    const rows = section.split('\n').filter((l) => l.startsWith('| '));
    const gateways = rows.find((r) => r.startsWith('| `gateway1`, `gateway2`'))!;
    expect(gateways).toContain(`\`PORT\` (${defaults.gatewayPorts[0]}), \`PORT+1\``);
    const subgraphs = rows.find((r) => r.startsWith('| one per subgraph'))!;
    const first = defaults.subgraphPorts[SUBGRAPH_NAMES[0]];
    const last = defaults.subgraphPorts[SUBGRAPH_NAMES[SUBGRAPH_NAMES.length - 1]];
    expect(subgraphs).toContain('`SPLIT_SUBGRAPH_BASE_PORT`');
    expect(subgraphs).toContain(`(${first}-${last})`);
  });
});
