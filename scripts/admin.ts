// `npm run admin -- grant <email>` / `npm run admin -- revoke <email>`: grants or revokes platform staff on the
// database of the environment (DATABASE_URL, else the embedded database under DATA_DIR), as the operator. Each change
// is written to the platform audit log (actor: none, `details.by`: script). Exit codes: 0 done (or nothing to change),
// 1 no account has that email, 2 usage or configuration error.
import { pino } from 'pino';
import { ConfigError, loadConfig } from '../subgraphs/kernel/index.js';
import { DomainError } from '../subgraphs/kernel/errors.js';
import { grantStaff, revokeStaff } from '../subgraphs/platform/index.js';
import { openDeps } from '../server/deps.js';

const USAGE = 'usage: npm run admin -- grant <email> | revoke <email>';

async function main(argv: string[]): Promise<number> {
  const [command, email, ...rest] = argv;
  if ((command !== 'grant' && command !== 'revoke') || !email || rest.length > 0) {
    console.error(USAGE);
    return 2;
  }
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }
  const opened = await openDeps(config, { log: pino({ level: 'warn' }) });
  try {
    if (command === 'grant') {
      const { user, granted } = await grantStaff(opened.deps, email, 'script');
      console.log(granted ? `granted platform staff to ${user.email} (${user.id})` : `${user.email} (${user.id}) is platform staff already`);
    } else {
      const { user, revoked } = await revokeStaff(opened.deps, email);
      console.log(revoked ? `revoked platform staff from ${user.email} (${user.id})` : `${user.email} (${user.id}) was not platform staff`);
      if (revoked && config.platformAdminEmails.includes(email.trim().toLowerCase())) {
        console.log('note: this address is in PLATFORM_ADMIN_EMAILS, which grants it again at the next start-up');
      }
    }
    return 0;
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'not_found') {
      console.error(`no account has the email ${email}`);
      return 1;
    }
    throw error;
  } finally {
    await opened.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
