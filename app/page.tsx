import { redirect } from "next/navigation";

// The console starts at the sandbox list. (With sign-in, the (console) layout sends visitors without
// a session to /login, and to /setup while no user exists.)
export default function Home(): never {
  redirect("/sandboxes");
}
