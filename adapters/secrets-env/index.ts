export { createEnvSecrets, secretEnvName, type EnvSecretsOptions } from './env-secrets.js';
