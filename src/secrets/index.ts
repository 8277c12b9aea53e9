export { SecretMask } from './mask.js';
export { isSecretRef, defaultSecretRef, declaredSecretRef, secretRefName, mentionsRef, stringLeaves } from './refs.js';
