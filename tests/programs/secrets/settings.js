// Secrets in a JS object (tests/integration/test_secrets.py); the literals stay out of the stop's excerpt.
function main() {
  const config = { user: 'bob', password: 'hunter2-js-field', apiKey: 'sk_live_4eC39HqLyjWDarjtT1zdp7dc' };
  const tokenizer = 'splits words';  // not a secret
  console.log('login', config.user, 'token=hunter2-js-output');
  //
  //
  //
  return config.user + tokenizer;  // stop here
}
main();
