// Control for the blocker: the main entry uses node:crypto, so under the blocker this import must fail.
await import('@svc/webhook-verifier');
console.log('control loaded: the blocker does not work');
