export { SecretMask } from './mask.js';
export { isSecretRef, defaultSecretRef, secretRefName, mentionsRef, stringLeaves } from './refs.js';
