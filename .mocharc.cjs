/**
 * mocha's configuration. `npx mocha out/test/x.test.js …` runs just the files named (the inner
 * loop); with no file named it runs the whole suite. (A `spec` in the configuration would be added
 * to the files named on the command line, so the whole suite would always run.)
 */
const VALUE_OPTIONS = new Set(['--reporter', '-R', '--require', '-r', '--file', '--ignore', '--config', '--grep', '-g', '--fgrep', '-f']);
const named = process.argv.slice(2).filter((arg, i, all) => !arg.startsWith('-') && !VALUE_OPTIONS.has(all[i - 1]) && arg.endsWith('.js'));

module.exports = {
  spec: named.length > 0 ? [] : ['out/test/**/*.test.js'],
  timeout: 30000,
  reporter: './out/test/support/reporter.js',
  'enable-source-maps': true,
  ignore: ['out/test/vscode/suite/**'],
};
