// Use cases that span identity and members, above both: neither domain imports the other for them.
export { signup } from './onboarding.service.js';
